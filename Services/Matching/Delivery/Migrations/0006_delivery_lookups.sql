-- Lookups that the delivery steps make on every order, dispatch and current view, and that scanned whole tables as
-- they grew (thousands of rows read for each order placed on a stack that had run a few load tests):
-- a student's orders (the cap on open orders, GET /v1/delivery/current), an order's matches (the order as shown),
-- an order's offers (whether a run was offered it already), a member's matches.
CREATE INDEX IF NOT EXISTS orders_by_orderer ON orders (orderer_id);
CREATE INDEX IF NOT EXISTS matches_by_order ON matches (order_id, created_at);
CREATE INDEX IF NOT EXISTS offers_by_order ON offers (order_id);
CREATE INDEX IF NOT EXISTS matches_by_orderer ON matches (orderer_id);
CREATE INDEX IF NOT EXISTS matches_by_deliverer ON matches (deliverer_id);
