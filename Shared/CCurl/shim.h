#include <curl/curl.h>

// curl_easy_setopt is variadic, which Swift cannot call: one typed door for each kind of value it takes.
static inline CURLcode tarrare_curl_set_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

static inline CURLcode tarrare_curl_set_pointer(CURL *handle, CURLoption option, const void *value) {
    return curl_easy_setopt(handle, option, value);
}

typedef size_t (*tarrare_curl_read_function)(char *buffer, size_t size, size_t count, void *context);

static inline CURLcode tarrare_curl_set_read_function(CURL *handle, tarrare_curl_read_function function) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, function);
}
