CREATE TABLE "campaigns" (
	"id" text PRIMARY KEY NOT NULL,
	"spec" jsonb NOT NULL,
	"spec_hash" text NOT NULL,
	"production_checkpoint_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "checkpoints" (
	"id" text PRIMARY KEY NOT NULL,
	"run_id" text NOT NULL,
	"experiment_id" text NOT NULL,
	"step" integer NOT NULL,
	"path" text NOT NULL,
	"sha256" text NOT NULL,
	"format" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "critiques" (
	"id" text PRIMARY KEY NOT NULL,
	"campaign_id" text NOT NULL,
	"source_kind" text NOT NULL,
	"source_id" text NOT NULL,
	"teacher" text NOT NULL,
	"prompt_version" text NOT NULL,
	"text" text NOT NULL,
	"signal" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "dataset_versions" (
	"id" text PRIMARY KEY NOT NULL,
	"dataset_id" text NOT NULL,
	"parent_ids" jsonb DEFAULT '[]'::jsonb NOT NULL,
	"path" text NOT NULL,
	"content_hash" text NOT NULL,
	"counts_by_source" jsonb NOT NULL,
	"mix_weights" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"loss_weights" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "datasets" (
	"id" text PRIMARY KEY NOT NULL,
	"campaign_id" text NOT NULL,
	"name" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "decisions" (
	"id" text PRIMARY KEY NOT NULL,
	"campaign_id" text NOT NULL,
	"kind" text NOT NULL,
	"checkpoint_id" text,
	"experiment_id" text,
	"rule" text NOT NULL,
	"reason" text NOT NULL,
	"figures" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"accepted" boolean NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "eval_items" (
	"id" text PRIMARY KEY NOT NULL,
	"suite_id" text NOT NULL,
	"split" text NOT NULL,
	"grader" text NOT NULL,
	"category" text DEFAULT 'code' NOT NULL,
	"prompt" text NOT NULL,
	"reference" text NOT NULL,
	"content_hash" text NOT NULL,
	"source_file" text NOT NULL
);
--> statement-breakpoint
CREATE TABLE "eval_results" (
	"id" text PRIMARY KEY NOT NULL,
	"checkpoint_id" text NOT NULL,
	"experiment_id" text NOT NULL,
	"suite_id" text NOT NULL,
	"split" text NOT NULL,
	"item_count" integer NOT NULL,
	"metrics" jsonb NOT NULL,
	"per_item" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "eval_suites" (
	"id" text PRIMARY KEY NOT NULL,
	"name" text NOT NULL,
	"version" integer NOT NULL,
	"content_hash" text NOT NULL,
	"settings" jsonb DEFAULT '{}'::jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "examples" (
	"dataset_version_id" text NOT NULL,
	"content_hash" text NOT NULL,
	"source" text NOT NULL,
	"source_ref" text NOT NULL,
	"category" text DEFAULT 'code' NOT NULL,
	"content" text NOT NULL,
	"weight" double precision DEFAULT 1 NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "examples_dataset_version_id_content_hash_pk" PRIMARY KEY("dataset_version_id","content_hash")
);
--> statement-breakpoint
CREATE TABLE "experiments" (
	"id" text PRIMARY KEY NOT NULL,
	"campaign_id" text NOT NULL,
	"inner_loop_id" text NOT NULL,
	"index" integer NOT NULL,
	"dataset_version_id" text NOT NULL,
	"params" jsonb NOT NULL,
	"hypothesis" text DEFAULT '' NOT NULL,
	"proposer" text NOT NULL,
	"status" text NOT NULL,
	"public_score" double precision,
	"heldout_score" double precision,
	"best_checkpoint_id" text,
	"error" text,
	"started_at" timestamp with time zone,
	"finished_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "feedback_events" (
	"id" text PRIMARY KEY NOT NULL,
	"campaign_id" text NOT NULL,
	"kind" text NOT NULL,
	"model_version" text NOT NULL,
	"prompt" text NOT NULL,
	"output" text NOT NULL,
	"correction" text,
	"rating" integer,
	"comment" text,
	"received_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "heldout_reads" (
	"id" bigint PRIMARY KEY GENERATED ALWAYS AS IDENTITY (sequence name "heldout_reads_id_seq" INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 START WITH 1 CACHE 1),
	"suite_id" text NOT NULL,
	"reader" text NOT NULL,
	"purpose" text NOT NULL,
	"read_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "inner_loops" (
	"id" text PRIMARY KEY NOT NULL,
	"campaign_id" text NOT NULL,
	"dataset_version_id" text NOT NULL,
	"status" text NOT NULL,
	"best_experiment_id" text,
	"baseline_experiment_id" text,
	"summary" jsonb,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "metric_points" (
	"run_id" text NOT NULL,
	"name" text NOT NULL,
	"step" integer NOT NULL,
	"value" double precision NOT NULL,
	"offset" bigint NOT NULL,
	CONSTRAINT "metric_points_run_id_name_step_pk" PRIMARY KEY("run_id","name","step")
);
--> statement-breakpoint
CREATE TABLE "training_runs" (
	"id" text PRIMARY KEY NOT NULL,
	"experiment_id" text NOT NULL,
	"attempt" integer NOT NULL,
	"backend" text NOT NULL,
	"handle" jsonb,
	"run_dir" text NOT NULL,
	"status" text NOT NULL,
	"exit_code" integer,
	"stderr_tail" text,
	"trainer_seconds" double precision,
	"launches" integer DEFAULT 1 NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"ended_at" timestamp with time zone
);
--> statement-breakpoint
CREATE INDEX "eval_items_suite_split_idx" ON "eval_items" USING btree ("suite_id","split");--> statement-breakpoint
CREATE INDEX "experiments_loop_idx" ON "experiments" USING btree ("inner_loop_id");--> statement-breakpoint
CREATE INDEX "experiments_campaign_idx" ON "experiments" USING btree ("campaign_id");--> statement-breakpoint
CREATE INDEX "training_runs_experiment_idx" ON "training_runs" USING btree ("experiment_id");