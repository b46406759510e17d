DROP TABLE access_record;
DROP FUNCTION access_record_append_only();
DROP FUNCTION access_record_no_truncate();
DROP TABLE privacy_setting;
