CREATE TABLE "agent_calls" (
	"id" text PRIMARY KEY NOT NULL,
	"campaign_id" text NOT NULL,
	"role" text NOT NULL,
	"prompt_version" text NOT NULL,
	"model" text NOT NULL,
	"tokens_in" integer DEFAULT 0 NOT NULL,
	"tokens_out" integer DEFAULT 0 NOT NULL,
	"cost_usd" double precision DEFAULT 0 NOT NULL,
	"latency_ms" integer NOT NULL,
	"raw_reply" text,
	"mode" text NOT NULL,
	"outcome" text NOT NULL,
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "analyses" (
	"id" text PRIMARY KEY NOT NULL,
	"campaign_id" text NOT NULL,
	"inner_loop_id" text NOT NULL,
	"start_index" integer NOT NULL,
	"author" text NOT NULL,
	"prompt_version" text NOT NULL,
	"text" text NOT NULL,
	"call_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "proposal_batches" (
	"id" text PRIMARY KEY NOT NULL,
	"inner_loop_id" text NOT NULL,
	"start_index" integer NOT NULL,
	"mode" text NOT NULL,
	"note" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE INDEX "agent_calls_campaign_idx" ON "agent_calls" USING btree ("campaign_id");