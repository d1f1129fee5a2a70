#ifndef CTRESOR_CRYPTO_H
#define CTRESOR_CRYPTO_H

#include <stddef.h>
#include <stdint.h>

/// out = base^exponent mod modulus, every number unsigned big-endian, `out` written as exactly
/// `out_len` bytes (left-padded with zeros). BoringSSL's constant-time Montgomery
/// exponentiation, as swift-crypto vendors and links it (see modexp.c for why it is reached
/// this way). `base` must be less than `modulus`, and `modulus` odd.
/// Returns 1 on success, 0 on failure (allocation, even modulus, base not reduced, short `out`).
int tresor_mod_exp(const uint8_t *base, size_t base_len,
                   const uint8_t *exponent, size_t exponent_len,
                   const uint8_t *modulus, size_t modulus_len,
                   uint8_t *out, size_t out_len);

#endif
