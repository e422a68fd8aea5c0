CREATE TABLE "capacity" (
	"backend" text PRIMARY KEY NOT NULL,
	"max_jobs" integer NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "capacity_slots" (
	"run_id" text PRIMARY KEY NOT NULL,
	"experiment_id" text NOT NULL,
	"campaign_id" text NOT NULL,
	"backend" text NOT NULL,
	"waited_seconds" double precision NOT NULL,
	"acquired_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "cost_ledger" (
	"id" text PRIMARY KEY NOT NULL,
	"campaign_id" text NOT NULL,
	"kind" text NOT NULL,
	"backend" text,
	"gpu_type" text,
	"quantity" double precision NOT NULL,
	"unit_price_usd" double precision NOT NULL,
	"amount_usd" double precision NOT NULL,
	"cpu_seconds" double precision,
	"source_id" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
ALTER TABLE "experiments" ADD COLUMN "capacity_wait_seconds" double precision;--> statement-breakpoint
ALTER TABLE "training_runs" ADD COLUMN "capacity_wait_seconds" double precision;--> statement-breakpoint
CREATE INDEX "capacity_slots_campaign_idx" ON "capacity_slots" USING btree ("campaign_id");--> statement-breakpoint
CREATE INDEX "capacity_slots_backend_idx" ON "capacity_slots" USING btree ("backend");--> statement-breakpoint
CREATE INDEX "cost_ledger_campaign_idx" ON "cost_ledger" USING btree ("campaign_id");