CREATE TABLE "outer_iterations" (
	"id" text PRIMARY KEY NOT NULL,
	"campaign_id" text NOT NULL,
	"iteration" integer NOT NULL,
	"workflow_id" text NOT NULL,
	"trigger" text NOT NULL,
	"status" text NOT NULL,
	"incumbent_checkpoint_id" text,
	"new_feedback" integer DEFAULT 0 NOT NULL,
	"feedback_from" timestamp with time zone,
	"feedback_to" timestamp with time zone,
	"dataset_version_id" text,
	"inner_loop_id" text,
	"candidate_checkpoint_id" text,
	"decision_id" text,
	"summary" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"finished_at" timestamp with time zone
);
--> statement-breakpoint
ALTER TABLE "critiques" ADD COLUMN "outer_iteration_id" text;--> statement-breakpoint
ALTER TABLE "feedback_events" ADD COLUMN "ingested_by" text;--> statement-breakpoint
ALTER TABLE "inner_loops" ADD COLUMN "base_checkpoint_id" text;--> statement-breakpoint
CREATE UNIQUE INDEX "outer_iterations_campaign_iteration_idx" ON "outer_iterations" USING btree ("campaign_id","iteration");--> statement-breakpoint
CREATE INDEX "feedback_events_campaign_ingested_idx" ON "feedback_events" USING btree ("campaign_id","ingested_by");