-- Orders that name up to five restaurants, any of which will do, and a destination that is a building or a point the
-- orderer gave. `restaurant_id` stays the first restaurant named, for what shows one. The destination is kept with
-- the order as it was placed (a point has no place to join), and so is its name: the building's, or the nearest
-- building's for a point.
ALTER TABLE orders
    ADD COLUMN restaurant_ids uuid[],
    ADD COLUMN destination_name text,
    ADD COLUMN destination_lat double precision,
    ADD COLUMN destination_lon double precision;

UPDATE orders o
SET restaurant_ids = ARRAY[o.restaurant_id], destination_name = p.name, destination_lat = p.latitude,
    destination_lon = p.longitude
FROM places p WHERE p.id = o.destination_id;

ALTER TABLE orders
    ALTER COLUMN restaurant_ids SET NOT NULL,
    ALTER COLUMN destination_name SET NOT NULL,
    ALTER COLUMN destination_lat SET NOT NULL,
    ALTER COLUMN destination_lon SET NOT NULL,
    ALTER COLUMN destination_id DROP NOT NULL,
    ADD CONSTRAINT orders_one_to_five_restaurants CHECK (cardinality(restaurant_ids) BETWEEN 1 AND 5
        AND restaurant_ids[1] = restaurant_id);

-- The waiting orders a run's restaurant may serve (a run that opens is matched against them).
DROP INDEX IF EXISTS orders_waiting_at_restaurant;
CREATE INDEX orders_waiting_at_restaurants ON orders USING gin (restaurant_ids) WHERE status = 'waiting';
-- The open requests a deliverer browses: the campus's orders without a deliverer yet.
CREATE INDEX orders_open_on_campus ON orders (campus, created_at) WHERE status IN ('waiting', 'offered');
