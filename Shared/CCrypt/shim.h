#include <crypt.h>
#include <string.h>

/// Hashes `phrase` with the bcrypt setting `setting` into `output` (at least CRYPT_OUTPUT_SIZE bytes).
/// Returns 0 on success.
static inline int tarrare_crypt(const char *phrase, const char *setting, char *output, int output_size) {
    struct crypt_data data;
    memset(&data, 0, sizeof data);
    char *result = crypt_rn(phrase, setting, &data, sizeof data);
    if (result == NULL || result[0] == '*' || (int)strlen(result) >= output_size) return -1;
    strcpy(output, result);
    return 0;
}
