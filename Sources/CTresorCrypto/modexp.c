// Modular exponentiation for the Secret Service's finite-field Diffie-Hellman.
//
// swift-crypto has no finite-field DH API, but the BoringSSL it vendors (the target
// CCryptoBoringSSL, linked into every binary that uses Crypto) has the big-number code its RSA
// runs on. SwiftPM does not let another package import that target, so the functions used here
// are declared below under the names swift-crypto gives them (the `CCryptoBoringSSL_`
// prefix). A swift-crypto release that renamed them fails at link time, never at run time; the
// known-answer tests of TresorCryptoTests (RFC 2409 group 2, OpenSSL cross-checks) pin the
// results.

#include "CTresorCrypto.h"

typedef struct bignum_st BIGNUM;
typedef struct bignum_ctx BN_CTX;
typedef struct bn_mont_ctx_st BN_MONT_CTX;

extern BIGNUM *CCryptoBoringSSL_BN_new(void);
extern void CCryptoBoringSSL_BN_free(BIGNUM *bn);
extern void CCryptoBoringSSL_BN_clear_free(BIGNUM *bn);
extern BIGNUM *CCryptoBoringSSL_BN_bin2bn(const uint8_t *in, size_t len, BIGNUM *ret);
extern int CCryptoBoringSSL_BN_bn2bin_padded(uint8_t *out, size_t len, const BIGNUM *in);
extern int CCryptoBoringSSL_BN_cmp(const BIGNUM *a, const BIGNUM *b);
extern int CCryptoBoringSSL_BN_is_odd(const BIGNUM *bn);
extern BN_CTX *CCryptoBoringSSL_BN_CTX_new(void);
extern void CCryptoBoringSSL_BN_CTX_free(BN_CTX *ctx);
extern BN_MONT_CTX *CCryptoBoringSSL_BN_MONT_CTX_new_for_modulus(const BIGNUM *mod, BN_CTX *ctx);
extern void CCryptoBoringSSL_BN_MONT_CTX_free(BN_MONT_CTX *mont);
extern int CCryptoBoringSSL_BN_mod_exp_mont_consttime(BIGNUM *rr, const BIGNUM *a, const BIGNUM *p,
                                                      const BIGNUM *m, BN_CTX *ctx, const BN_MONT_CTX *mont);

int tresor_mod_exp(const uint8_t *base, size_t base_len,
                   const uint8_t *exponent, size_t exponent_len,
                   const uint8_t *modulus, size_t modulus_len,
                   uint8_t *out, size_t out_len) {
    int ok = 0;
    BN_CTX *ctx = CCryptoBoringSSL_BN_CTX_new();
    BIGNUM *a = CCryptoBoringSSL_BN_bin2bn(base, base_len, NULL);
    BIGNUM *p = CCryptoBoringSSL_BN_bin2bn(exponent, exponent_len, NULL);
    BIGNUM *m = CCryptoBoringSSL_BN_bin2bn(modulus, modulus_len, NULL);
    BIGNUM *r = CCryptoBoringSSL_BN_new();
    BN_MONT_CTX *mont = NULL;
    if (ctx == NULL || a == NULL || p == NULL || m == NULL || r == NULL) goto done;
    // The constant-time exponentiation needs an odd modulus and a reduced base.
    if (!CCryptoBoringSSL_BN_is_odd(m) || CCryptoBoringSSL_BN_cmp(a, m) >= 0) goto done;
    mont = CCryptoBoringSSL_BN_MONT_CTX_new_for_modulus(m, ctx);
    if (mont == NULL) goto done;
    if (!CCryptoBoringSSL_BN_mod_exp_mont_consttime(r, a, p, m, ctx, mont)) goto done;
    ok = CCryptoBoringSSL_BN_bn2bin_padded(out, out_len, r);
done:
    CCryptoBoringSSL_BN_MONT_CTX_free(mont);
    CCryptoBoringSSL_BN_clear_free(r);
    CCryptoBoringSSL_BN_clear_free(p);   // the private exponent
    CCryptoBoringSSL_BN_free(a);
    CCryptoBoringSSL_BN_free(m);
    CCryptoBoringSSL_BN_CTX_free(ctx);
    return ok;
}
