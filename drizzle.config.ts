import { defineConfig } from 'drizzle-kit';

// `npm run db:generate` writes SQL migrations from db/schema.ts into db/migrations (committed).
export default defineConfig({
  dialect: 'postgresql',
  schema: './db/schema.ts',
  out: './db/migrations',
});
