CREATE TABLE "recipe_commits" (
	"campaign_id" text NOT NULL,
	"commit" text NOT NULL,
	"parent" text,
	"origin" text NOT NULL,
	"experiment_id" text,
	"kept_at" timestamp with time zone,
	"kept_score" double precision,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "recipe_commits_campaign_id_commit_pk" PRIMARY KEY("campaign_id","commit")
);
--> statement-breakpoint
CREATE TABLE "recipe_patches" (
	"id" text PRIMARY KEY NOT NULL,
	"campaign_id" text NOT NULL,
	"inner_loop_id" text NOT NULL,
	"experiment_id" text,
	"base_commit" text NOT NULL,
	"commit" text,
	"diff" text NOT NULL,
	"normalized_hash" text NOT NULL,
	"summary" text DEFAULT '' NOT NULL,
	"proposer" text NOT NULL,
	"hypothesis" text DEFAULT '' NOT NULL,
	"params" jsonb,
	"status" text NOT NULL,
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "experiments" ADD COLUMN "recipe_commit" text;--> statement-breakpoint
CREATE INDEX "recipe_commits_kept_idx" ON "recipe_commits" USING btree ("campaign_id","kept_at");--> statement-breakpoint
CREATE INDEX "recipe_patches_campaign_idx" ON "recipe_patches" USING btree ("campaign_id","created_at");--> statement-breakpoint
CREATE UNIQUE INDEX "recipe_patches_loop_experiment_idx" ON "recipe_patches" USING btree ("inner_loop_id","experiment_id");