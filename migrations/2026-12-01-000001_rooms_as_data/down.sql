DROP INDEX room_equipment_idx;
ALTER TABLE room DROP CONSTRAINT room_suite_in_one_area;
DROP INDEX room_area_position_key;
DELETE FROM reservation WHERE id IN (SELECT reservation_id FROM reservation_room WHERE room NOT IN ('A', 'B', 'C'));
DELETE FROM room WHERE code NOT IN ('A', 'B', 'C');
ALTER TABLE room
    DROP CONSTRAINT room_retired_has_time,
    DROP COLUMN area, DROP COLUMN capacity, DROP COLUMN equipment, DROP COLUMN suite,
    DROP COLUMN check_in_required, DROP COLUMN approval_required, DROP COLUMN max_duration_minutes,
    DROP COLUMN horizon_days, DROP COLUMN active, DROP COLUMN retired_at, DROP COLUMN created_at, DROP COLUMN updated_at;
ALTER TABLE room ADD CONSTRAINT room_position_key UNIQUE (position);
ALTER TABLE room DROP CONSTRAINT room_code_check;
ALTER TABLE room ADD CONSTRAINT room_code_check CHECK (code ~ '^[A-Z][A-Z0-9]{0,15}$');
