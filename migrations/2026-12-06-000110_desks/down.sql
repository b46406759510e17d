DROP TABLE staff_away;
ALTER TABLE reservation_room DROP CONSTRAINT reservation_room_one_desk_per_person;
DROP TRIGGER reservation_room_take_desk_holder ON reservation_room;
DROP FUNCTION reservation_room_take_desk_holder();
ALTER TABLE reservation_room DROP COLUMN desk_holder;
ALTER TABLE room
    DROP CONSTRAINT room_assigned_is_desk,
    DROP CONSTRAINT room_desk_alone,
    DROP CONSTRAINT room_plan_both,
    DROP COLUMN plan_y,
    DROP COLUMN plan_x,
    DROP COLUMN assigned_to,
    DROP COLUMN kind;
