ALTER TABLE "eval_items" ADD COLUMN "grader_config" jsonb;--> statement-breakpoint
ALTER TABLE "eval_items" ADD COLUMN "probe" jsonb;--> statement-breakpoint
ALTER TABLE "eval_results" ADD COLUMN "details" jsonb DEFAULT '{}'::jsonb NOT NULL;