-- A person's language (SPEC §19): pages and mail in it; NULL = not chosen
-- (the browser's Accept-Language, else Korean; mail in Korean).
ALTER TABLE staff_user ADD COLUMN language text CHECK (language IN ('ko', 'en'));
