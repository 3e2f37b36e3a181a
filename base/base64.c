/* base/base64.c - base64 encoding; see base64.h. */
#include "base/base64.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Two output characters per 12 input bits: half the lookups of the plain
 * table. Filled once, on first use, from the alphabet. */
static char pairs[4096][2];
static pthread_once_t pairs_once = PTHREAD_ONCE_INIT;

static void pairs_fill(void) {
    for (int i = 0; i < 4096; i++) pairs[i][0] = alphabet[i >> 6], pairs[i][1] = alphabet[i & 63];
}

static inline uint64_t be64(uint64_t x) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return __builtin_bswap64(x);
#else
    return x;
#endif
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_SSSE3_PATH 1

/* Twelve bytes (sixteen characters) per step with SSSE3, which every
 * x86-64 server of the last fifteen years has (checked once at run time):
 * the bytes of each three-byte group are shuffled into a 32-bit lane as
 * b a c b, the four six-bit indices are moved into the lane's four bytes
 * with two masks and two 16-bit multiplies (a multiply is a shift per
 * half-lane), and each index becomes its character by adding the offset
 * of its range of the alphabet (A-Z, a-z, 0-9, +, /), looked up by a
 * byte shuffle from the index's range number. Returns the bytes done (a
 * multiple of 12, leaving at least four: each step loads sixteen). */
__attribute__((target("ssse3"))) static size_t encode_ssse3(char *dst, const unsigned char *s, size_t n) {
    const __m128i shuf = _mm_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10);
    const __m128i mask_hi = _mm_set1_epi32(0x0fc0fc00), mul_hi = _mm_set1_epi32(0x04000040);
    const __m128i mask_lo = _mm_set1_epi32(0x003f03f0), mul_lo = _mm_set1_epi32(0x01000010);
    const __m128i offsets = _mm_setr_epi8('a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
                                          '0' - 52, '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 'A', 0, 0);
    size_t i = 0;
    for (; i + 16 <= n; i += 12, dst += 16) {
        __m128i in = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(s + i)), shuf);
        __m128i idx = _mm_or_si128(_mm_mulhi_epu16(_mm_and_si128(in, mask_hi), mul_hi),
                                   _mm_mullo_epi16(_mm_and_si128(in, mask_lo), mul_lo));
        /* Range number: 0 for 26-51, 1-10 for 52-61, 11 for '+', 12 for
         * '/', 13 for 0-25. */
        __m128i range = _mm_subs_epu8(idx, _mm_set1_epi8(51));
        range = _mm_or_si128(range, _mm_and_si128(_mm_cmpgt_epi8(_mm_set1_epi8(26), idx), _mm_set1_epi8(13)));
        _mm_storeu_si128((__m128i *)dst, _mm_add_epi8(idx, _mm_shuffle_epi8(offsets, range)));
    }
    return i;
}

/* The same steps on 256-bit registers: AVX2's byte shuffles work within
 * each 128-bit half, so each half takes its own twelve bytes (loaded 12
 * apart) and the tables are the SSSE3 ones twice. 24 bytes (32 characters)
 * a step, leaving at least four; about half the instructions per byte. */
__attribute__((target("avx2"))) static size_t encode_avx2(char *dst, const unsigned char *s, size_t n) {
    const __m256i shuf = _mm256_setr_epi8(1, 0, 2, 1, 4, 3, 5, 4, 7, 6, 8, 7, 10, 9, 11, 10, 1, 0, 2, 1, 4, 3, 5, 4,
                                          7, 6, 8, 7, 10, 9, 11, 10);
    const __m256i mask_hi = _mm256_set1_epi32(0x0fc0fc00), mul_hi = _mm256_set1_epi32(0x04000040);
    const __m256i mask_lo = _mm256_set1_epi32(0x003f03f0), mul_lo = _mm256_set1_epi32(0x01000010);
    const __m256i offsets = _mm256_setr_epi8(
        'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
        '+' - 62, '/' - 63, 'A', 0, 0, 'a' - 26, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52, '0' - 52,
        '0' - 52, '0' - 52, '0' - 52, '+' - 62, '/' - 63, 'A', 0, 0);
    size_t i = 0;
    for (; i + 28 <= n; i += 24, dst += 32) {
        __m256i in = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(s + i))),
                                             _mm_loadu_si128((const __m128i *)(s + i + 12)), 1);
        in = _mm256_shuffle_epi8(in, shuf);
        __m256i idx = _mm256_or_si256(_mm256_mulhi_epu16(_mm256_and_si256(in, mask_hi), mul_hi),
                                      _mm256_mullo_epi16(_mm256_and_si256(in, mask_lo), mul_lo));
        __m256i range = _mm256_subs_epu8(idx, _mm256_set1_epi8(51));
        range = _mm256_or_si256(range,
                                _mm256_and_si256(_mm256_cmpgt_epi8(_mm256_set1_epi8(26), idx), _mm256_set1_epi8(13)));
        _mm256_storeu_si256((__m256i *)dst, _mm256_add_epi8(idx, _mm256_shuffle_epi8(offsets, range)));
    }
    return i;
}

static int ssse3, avx2;
static void ssse3_probe(void) {
    ssse3 = __builtin_cpu_supports("ssse3");
    avx2 = __builtin_cpu_supports("avx2");
}
static pthread_once_t ssse3_once = PTHREAD_ONCE_INIT;
#endif

void base64_encode(char *dst, const void *src, size_t n) {
    const unsigned char *s = src;
    size_t i = 0;
    pthread_once(&pairs_once, pairs_fill);
#ifdef HAVE_SSSE3_PATH
    pthread_once(&ssse3_once, ssse3_probe);
    if (avx2 && n >= 28) {
        i = encode_avx2(dst, s, n);
        dst += i / 3 * 4;
    }
    if (ssse3 && n - i >= 16) {
        size_t k = encode_ssse3(dst, s + i, n - i);
        i += k;
        dst += k / 3 * 4;
    }
#endif
    /* Six bytes (eight characters) per step from one eight-byte load,
     * while two bytes past the six are there to load. */
    for (; i + 8 <= n; i += 6) {
        uint64_t w;
        memcpy(&w, s + i, 8);
        w = be64(w) >> 16; /* the six bytes, first one highest */
        memcpy(dst, pairs[(w >> 36) & 4095], 2);
        memcpy(dst + 2, pairs[(w >> 24) & 4095], 2);
        memcpy(dst + 4, pairs[(w >> 12) & 4095], 2);
        memcpy(dst + 6, pairs[w & 4095], 2);
        dst += 8;
    }
    for (; i + 3 <= n; i += 3) {
        uint32_t v = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        memcpy(dst, pairs[v >> 12], 2);
        memcpy(dst + 2, pairs[v & 4095], 2);
        dst += 4;
    }
    if (i < n) {
        uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0);
        dst[0] = alphabet[v >> 18];
        dst[1] = alphabet[(v >> 12) & 63];
        dst[2] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
        dst[3] = '=';
    }
}
