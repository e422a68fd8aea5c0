CREATE TABLE "campaign_versions" (
	"id" text PRIMARY KEY NOT NULL,
	"campaign_id" text NOT NULL,
	"hash" text NOT NULL,
	"spec" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "campaigns" ADD COLUMN "latest_version_id" text;--> statement-breakpoint
ALTER TABLE "experiments" ADD COLUMN "campaign_version_id" text;--> statement-breakpoint
ALTER TABLE "inner_loops" ADD COLUMN "campaign_version_id" text;--> statement-breakpoint
ALTER TABLE "outer_iterations" ADD COLUMN "campaign_version_id" text;--> statement-breakpoint
CREATE INDEX "campaign_versions_campaign_idx" ON "campaign_versions" USING btree ("campaign_id","created_at");--> statement-breakpoint
-- Backfill: each existing campaign's stored spec becomes its first version (hash: the first 12 hex digits of the
-- spec_hash it was stored with), and every loop, experiment and outer iteration recorded so far pins it.
INSERT INTO "campaign_versions" ("id", "campaign_id", "hash", "spec", "created_at")
  SELECT "id" || '@' || left("spec_hash", 12), "id", left("spec_hash", 12), "spec", "created_at" FROM "campaigns"
  ON CONFLICT DO NOTHING;--> statement-breakpoint
UPDATE "campaigns" SET "latest_version_id" = "id" || '@' || left("spec_hash", 12);--> statement-breakpoint
UPDATE "inner_loops" l SET "campaign_version_id" = c."latest_version_id" FROM "campaigns" c WHERE c."id" = l."campaign_id";--> statement-breakpoint
UPDATE "experiments" e SET "campaign_version_id" = c."latest_version_id" FROM "campaigns" c WHERE c."id" = e."campaign_id";--> statement-breakpoint
UPDATE "outer_iterations" o SET "campaign_version_id" = c."latest_version_id" FROM "campaigns" c WHERE c."id" = o."campaign_id";
