// Photos of media on the page: their GET needs the token, which an <img> cannot send, so each is fetched and shown
// as a blob: URL, revoked when it is no longer shown.

/** Photos of media as blob: URLs, each revoked when its element is replaced or released, or the view goes. */
export function imageKeeper(api) {
  const urls = new Set();
  let alive = true;
  return {
    async show(img, id, size) {
      try {
        const url = await api.imageURL(id, size);
        if (!alive || !img.isConnected) return URL.revokeObjectURL(url);
        if (urls.has(img.src)) {
          URL.revokeObjectURL(img.src);
          urls.delete(img.src);
        }
        urls.add(url);
        img.src = url;
        img.hidden = false;
      } catch {
        img.hidden = true;
      }
    },
    releaseWithin(element) {
      for (const img of element.querySelectorAll("img[src^='blob:']")) {
        URL.revokeObjectURL(img.src);
        urls.delete(img.src);
      }
    },
    stop() {
      alive = false;
      urls.forEach((url) => URL.revokeObjectURL(url));
      urls.clear();
    },
  };
}
