ALTER TABLE "datasets" ALTER COLUMN "campaign_id" DROP NOT NULL;--> statement-breakpoint
ALTER TABLE "eval_items" ADD COLUMN "max_bytes" integer;--> statement-breakpoint
ALTER TABLE "examples" ADD COLUMN "prompt" text;--> statement-breakpoint
ALTER TABLE "examples" ADD COLUMN "completion" text;--> statement-breakpoint
ALTER TABLE "examples" ADD COLUMN "messages" jsonb;