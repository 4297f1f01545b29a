// Sharing one's position while a screen needs it: the device's position as the browser tells it, or points the person
// chooses on the map, sent to the server without flooding it.

/** Sends positions with `send(point)` (a promise of the server's answer): a point the person chose at once, a moving
 *  fix of the device at most every `pace` ms, one request at a time (the latest point goes next; none waits behind
 *  it), and the latest again every `heartbeat` ms when given. While it runs, `sent(answer)` and `failed(error)` hear
 *  how each request ended. */
export function positionSender({ send, pace, heartbeat = 0, sent, failed }) {
  let latest = null;
  let running = false;
  let sending = null;
  let again = false;
  let lastSentAt = 0;
  let trailing = null;
  let beat = null;
  let watch = null;

  function next() {
    if (!running || !latest) return;
    if (sending) {
      // The latest point goes as soon as the one under way is answered.
      again = true;
      return;
    }
    lastSentAt = Date.now();
    sending = send({ lat: latest.lat, lon: latest.lon })
      .then((answer) => running && sent?.(answer), (error) => running && failed?.(error))
      .finally(() => {
        sending = null;
        if (again) {
          again = false;
          next();
        }
      });
  }

  const sender = {
    get point() {
      return latest;
    },
    get isRunning() {
      return running;
    },
    get isFollowing() {
      return watch !== null;
    },
    /** A new position; `chosen` when the person picked it (sent at once), else a fix of the device (paced). */
    set(point, chosen) {
      latest = { lat: point.lat, lon: point.lon };
      clearTimeout(trailing);
      const wait = chosen ? 0 : Math.max(0, pace - (Date.now() - lastSentAt));
      if (wait === 0) next();
      else trailing = setTimeout(next, wait);
    },
    /** Starts sending, from `point` when given (a position the server already holds needs no new request). */
    start(point) {
      if (point) latest = { lat: point.lat, lon: point.lon };
      running = true;
      clearInterval(beat);
      if (heartbeat) beat = setInterval(next, heartbeat);
    },
    /** Follows the device's position while the browser tells it; `onError(error)` when it does not. Answers whether
     *  it started following. */
    follow(onError) {
      if (!navigator.geolocation || watch !== null) return false;
      watch = navigator.geolocation.watchPosition(
        (position) => sender.set({ lat: position.coords.latitude, lon: position.coords.longitude }, false),
        (error) => {
          if (error.code === error.PERMISSION_DENIED && watch !== null) {
            navigator.geolocation.clearWatch(watch);
            watch = null;
          }
          onError?.(error);
        },
        { enableHighAccuracy: true, maximumAge: 5_000, timeout: 20_000 });
      return true;
    },
    /** Stops sending; answers once a request under way has been answered, so that nothing lands after. */
    async stop() {
      running = false;
      again = false;
      clearInterval(beat);
      clearTimeout(trailing);
      if (watch !== null) navigator.geolocation.clearWatch(watch);
      watch = null;
      await sending;
    },
  };
  return sender;
}
