-- Whether a driver's latest position was on their campus or within its margin when they reported it (the campuses
-- are configuration, so the rule is asked as the position arrives): only such drivers are offered the campus's rides.
-- A position of before this column counts as far until the driver's next report, seconds later.
ALTER TABLE ride_driver_positions ADD COLUMN is_near_campus boolean NOT NULL DEFAULT false;
