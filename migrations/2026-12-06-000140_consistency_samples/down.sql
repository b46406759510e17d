DROP AGGREGATE consistency_samples(jsonb, integer);
DROP FUNCTION consistency_sample_add(jsonb, jsonb, integer);
