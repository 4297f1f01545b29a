-- Delivery measures distances with PostGIS, as the other flows do: its own great-circle function goes.
CREATE EXTENSION IF NOT EXISTS postgis;
DROP FUNCTION distance_meters(double precision, double precision, double precision, double precision);
