DROP TABLE capacity_offer;
DROP TABLE capacity_hold;
DROP TABLE waitlist_entry;
DROP TABLE capacity_resource;
