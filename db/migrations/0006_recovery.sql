DROP INDEX "outer_iterations_campaign_iteration_idx";--> statement-breakpoint
ALTER TABLE "outer_iterations" ADD COLUMN "attempt" integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE "outer_iterations" ADD COLUMN "workflow_run_id" text;--> statement-breakpoint
ALTER TABLE "training_runs" ADD COLUMN "verdict" jsonb;--> statement-breakpoint
CREATE UNIQUE INDEX "outer_iterations_campaign_iteration_attempt_idx" ON "outer_iterations" USING btree ("campaign_id","iteration","attempt");