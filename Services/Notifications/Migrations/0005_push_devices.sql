-- Devices as apps and browsers register them: a platform (web, apns or fcm); an APNs or FCM token, or a browser's
-- push subscription (its endpoint in `token`, its keys beside it). A token names one device, which belongs to one
-- user: registered again by another user (a shared phone), it moves to them.
ALTER TABLE devices ADD COLUMN p256dh bytea, ADD COLUMN auth bytea;
UPDATE devices SET platform = CASE platform WHEN 'ios' THEN 'apns' WHEN 'android' THEN 'fcm' ELSE platform END;
-- Web devices registered by a bare token have no keys to encrypt with: they could never be pushed to.
DELETE FROM devices WHERE platform = 'web' OR platform NOT IN ('apns', 'fcm');
DELETE FROM devices d USING devices newer
WHERE d.platform = newer.platform AND d.token = newer.token AND (d.created_at, d.id) < (newer.created_at, newer.id);
ALTER TABLE devices DROP CONSTRAINT devices_user_id_token_key;
ALTER TABLE devices ADD CONSTRAINT devices_platform_token UNIQUE (platform, token),
    ADD CONSTRAINT devices_platform CHECK (platform IN ('web', 'apns', 'fcm')),
    ADD CONSTRAINT devices_web_keys CHECK ((platform = 'web') = (p256dh IS NOT NULL AND auth IS NOT NULL));
CREATE INDEX devices_user ON devices (user_id);
