// libvips's operations take NULL-terminated lists of optional arguments, which Swift cannot call; these
// fixed-argument wrappers name the few that media uses.
#include <vips/vips.h>

// libvips's warnings repeat what its error buffer says, which media reports with the failed image.
static inline void tarrare_vips_quiet(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {}

static inline int tarrare_vips_start(void) {
    if (VIPS_INIT("tarrare-media")) return -1;
    g_log_set_handler("VIPS", G_LOG_LEVEL_WARNING | G_LOG_LEVEL_MESSAGE | G_LOG_LEVEL_INFO, tarrare_vips_quiet, NULL);
    // Media handles one upload at a time per request and keeps nothing: no operation cache.
    vips_cache_set_max(0);
    return 0;
}

// The header is read now, the pixels only when an image is written; a truncated file fails then.
static inline VipsImage *tarrare_vips_load(const void *buffer, size_t length) {
    return vips_image_new_from_buffer(buffer, length, "", "fail_on", VIPS_FAIL_ON_TRUNCATED, NULL);
}

static inline int tarrare_vips_autorotate(VipsImage *in, VipsImage **out) {
    return vips_autorot(in, out, NULL);
}

static inline int tarrare_vips_shrink_to_width(VipsImage *in, VipsImage **out, int width) {
    return vips_thumbnail_image(in, out, width, "height", 100000, "size", VIPS_SIZE_DOWN, NULL);
}

// `suffix` names the format and its options, e.g. ".jpg[Q=85,strip]": strip drops EXIF, XMP and the rest.
static inline int tarrare_vips_save(VipsImage *in, const char *suffix, void **buffer, size_t *length) {
    return vips_image_write_to_buffer(in, suffix, buffer, length, NULL);
}

// A stand-in for a phone photo, for the benchmark: colour grain of the given strength, as a JPEG of quality 90.
static inline int tarrare_vips_grain_jpeg(int width, int height, double grain, void **buffer, size_t *length) {
    VipsImage *bands[3] = {NULL, NULL, NULL};
    VipsImage *joined = NULL, *pixels = NULL;
    int result = -1;
    for (int band = 0; band < 3; band++) {
        if (vips_gaussnoise(&bands[band], width, height, "mean", 96.0 + 32.0 * band, "sigma", grain, NULL)) goto done;
    }
    if (vips_bandjoin(bands, &joined, 3, NULL)) goto done;
    if (vips_cast(joined, &pixels, VIPS_FORMAT_UCHAR, NULL)) goto done;
    result = vips_image_write_to_buffer(pixels, ".jpg[Q=90]", buffer, length, NULL);
done:
    for (int band = 0; band < 3; band++) if (bands[band]) g_object_unref(bands[band]);
    if (joined) g_object_unref(joined);
    if (pixels) g_object_unref(pixels);
    return result;
}

static inline void tarrare_vips_release(VipsImage *image) {
    if (image) g_object_unref(image);
}
