-- A capacity grant in one round trip (issue 38): what services/capacity.ts ran as a transaction of ten statements
-- (begin, the advisory lock, the run's own slot, the reap, two counts, the limit, the insert, the wait, commit), in
-- the same order under the same transaction-level lock, so two acquirers still see each other's grants and the
-- limits stay exact. VOLATILE: each statement below reads a snapshot taken after the lock was granted. The lock key
-- and the channel come from the caller (services/capacity.ts keeps them). Returns one row: granted and the wait (a
-- slot the run already holds: already_held), or not granted and the counts that refused it.
CREATE OR REPLACE FUNCTION flywheel_try_acquire_slot(
	lock_key bigint,
	channel text,
	p_run_id text,
	p_experiment_id text,
	p_campaign_id text,
	p_backend text,
	campaign_limit integer,
	p_waited double precision,
	OUT granted boolean,
	OUT waited double precision,
	OUT already_held boolean,
	OUT campaign_held integer,
	OUT backend_held integer,
	OUT backend_limit integer
) LANGUAGE plpgsql VOLATILE AS $$
DECLARE
	freed record;
BEGIN
	PERFORM pg_advisory_xact_lock(lock_key);
	SELECT s.waited_seconds INTO waited FROM capacity_slots s WHERE s.run_id = p_run_id;
	IF FOUND THEN
		granted := true;
		already_held := true;
		RETURN;
	END IF;
	-- The stale-holder reaper: slots whose run has ended (a release that never ran), each freeing waking the waiters.
	FOR freed IN
		DELETE FROM capacity_slots s WHERE s.run_id IN (SELECT r.id FROM training_runs r WHERE r.ended_at IS NOT NULL)
		RETURNING s.backend
	LOOP
		PERFORM pg_notify(channel, freed.backend);
	END LOOP;
	SELECT count(*) INTO campaign_held FROM capacity_slots s WHERE s.campaign_id = p_campaign_id;
	SELECT count(*) INTO backend_held FROM capacity_slots s WHERE s.backend = p_backend;
	SELECT c.max_jobs INTO backend_limit FROM capacity c WHERE c.backend = p_backend;
	IF campaign_held >= campaign_limit OR (backend_limit IS NOT NULL AND backend_held >= backend_limit) THEN
		granted := false;
		RETURN;
	END IF;
	INSERT INTO capacity_slots (run_id, experiment_id, campaign_id, backend, waited_seconds)
	VALUES (p_run_id, p_experiment_id, p_campaign_id, p_backend, p_waited);
	-- The wait is added once per run: the insert above happens once per run id.
	UPDATE experiments e SET capacity_wait_seconds = coalesce(e.capacity_wait_seconds, 0) + p_waited WHERE e.id = p_experiment_id;
	granted := true;
	waited := p_waited;
	already_held := false;
END;
$$;
