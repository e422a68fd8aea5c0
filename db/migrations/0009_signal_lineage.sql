CREATE TABLE "revisions" (
	"id" text PRIMARY KEY NOT NULL,
	"campaign_id" text NOT NULL,
	"outer_iteration_id" text,
	"critique_id" text NOT NULL,
	"checkpoint_id" text NOT NULL,
	"prompt" text NOT NULL,
	"output" text NOT NULL,
	"verified" boolean NOT NULL,
	"verified_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "train_pairs" (
	"dataset_version_id" text NOT NULL,
	"content_hash" text NOT NULL,
	"source" text NOT NULL,
	"source_ref" text NOT NULL,
	"builder" text NOT NULL,
	"category" text NOT NULL,
	"prompt" text NOT NULL,
	"chosen" text NOT NULL,
	"rejected" text NOT NULL,
	"weight" double precision DEFAULT 1 NOT NULL,
	"lineage" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "train_pairs_dataset_version_id_content_hash_pk" PRIMARY KEY("dataset_version_id","content_hash")
);
--> statement-breakpoint
ALTER TABLE "examples" ADD COLUMN "builder" text;