DROP TABLE area_plan;
