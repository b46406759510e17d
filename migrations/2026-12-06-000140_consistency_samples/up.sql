-- The consistency report's samples: the first `n` items of a group, and no
-- more ever kept, however many rows the group has. Each check counts its
-- violations and shows the first few; numbering every row to find them (a
-- running count over the whole history) was 30 % of the history pass at
-- 3,000,000 bookings, and an unbounded jsonb_agg would hold every violation
-- of a badly broken site in memory. Only violations reach the transition
-- (the checks call it with FILTER), so a healthy site never calls it. It
-- has no combine function, so it runs above a parallel plan's Gather.
CREATE FUNCTION consistency_sample_add(samples jsonb, item jsonb, n integer) RETURNS jsonb
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    AS $$ SELECT CASE WHEN jsonb_array_length(samples) < n THEN samples || jsonb_build_array(item) ELSE samples END $$;

CREATE AGGREGATE consistency_samples(jsonb, integer) (
    SFUNC = consistency_sample_add,
    STYPE = jsonb,
    INITCOND = '[]',
    PARALLEL = SAFE
);
