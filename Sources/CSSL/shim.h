#ifndef LIFESYNC_CSSL_SHIM_H
#define LIFESYNC_CSSL_SHIM_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/rand.h>
#include <openssl/bio.h>
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/socket.h>
#include <arpa/inet.h>
#include <string.h>

// OpenSSL spells these as macros, which Swift cannot call: thin functions over them.

static inline int lifesync_ctx_tls13_only(SSL_CTX *ctx) {
    return SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) == 1
        && SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION) == 1;
}

static inline int lifesync_ctx_set_groups(SSL_CTX *ctx, const char *groups) {
    return (int)SSL_CTX_set1_groups_list(ctx, groups);
}

// RELEASE_BUFFERS: a connection with nothing in flight gives its 16 KiB read and write buffers
// back (an idle node holds one connection per paired device).
static inline void lifesync_ctx_set_modes(SSL_CTX *ctx) {
    SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
}

static inline void lifesync_ctx_no_session_cache(SSL_CTX *ctx) {
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
}

static inline int lifesync_ctx_set_sigalgs(SSL_CTX *ctx, const char *list) {
    return (int)SSL_CTX_set1_sigalgs_list(ctx, list);
}

static inline int lifesync_ctx_add_chain_cert(SSL_CTX *ctx, X509 *certificate) {
    return (int)SSL_CTX_add1_chain_cert(ctx, certificate);
}

static inline long lifesync_bio_mem_data(BIO *bio, char **data) {
    return BIO_get_mem_data(bio, data);
}

static inline int lifesync_mbstring_asc(void) { return MBSTRING_ASC; }

// A socket BIO of our own: send(2) with MSG_NOSIGNAL, so a peer that went away fails the write
// instead of killing a process that did not ignore SIGPIPE (OpenSSL's socket BIO uses write(2)).
// The BIO only moves bytes; it never blocks (the socket is non-blocking) and owns nothing.

static int lifesync_sock_write(BIO *bio, const char *data, size_t length, size_t *written) {
    int fd = (int)(intptr_t)BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    for (;;) {
        ssize_t n = send(fd, data, length, MSG_NOSIGNAL);
        if (n >= 0) { *written = (size_t)n; return 1; }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_write(bio);
        return 0;
    }
}

static int lifesync_sock_read(BIO *bio, char *data, size_t length, size_t *read) {
    int fd = (int)(intptr_t)BIO_get_data(bio);
    BIO_clear_retry_flags(bio);
    for (;;) {
        ssize_t n = recv(fd, data, length, 0);
        if (n > 0) { *read = (size_t)n; return 1; }
        if (n == 0) return 0;  /* end of stream: no retry */
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) BIO_set_retry_read(bio);
        return 0;
    }
}

static long lifesync_sock_ctrl(BIO *bio, int command, long number, void *pointer) {
    (void)bio; (void)number; (void)pointer;
    return command == BIO_CTRL_FLUSH ? 1 : 0;
}

static int lifesync_sock_create(BIO *bio) {
    BIO_set_init(bio, 1);
    return 1;
}

/* Function-local statics: a header's global statics are not emitted for Swift. */
static inline BIO_METHOD **lifesync_sock_method_slot(void) {
    static BIO_METHOD *method;
    return &method;
}

static void lifesync_sock_method_make(void) {
    BIO_METHOD *method = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "lifesync socket");
    if (method == NULL) return;
    BIO_meth_set_write_ex(method, lifesync_sock_write);
    BIO_meth_set_read_ex(method, lifesync_sock_read);
    BIO_meth_set_ctrl(method, lifesync_sock_ctrl);
    BIO_meth_set_create(method, lifesync_sock_create);
    *lifesync_sock_method_slot() = method;
}

/// A BIO over the non-blocking socket `fd` (not owned: closing the BIO leaves the socket open).
static inline BIO *lifesync_socket_bio(int fd) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, lifesync_sock_method_make);
    BIO_METHOD *method = *lifesync_sock_method_slot();
    if (method == NULL) return NULL;
    BIO *bio = BIO_new(method);
    if (bio != NULL) BIO_set_data(bio, (void *)(intptr_t)fd);
    return bio;
}

// Certificate extensions, written as OpenSSL's configuration strings ("critical,CA:TRUE"), for a
// certificate `cert` issued by `issuer` (the same certificate when self-signed). 1 on success.
static inline int lifesync_x509_add_ext(X509 *cert, X509 *issuer, int nid, const char *value) {
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    X509_EXTENSION *ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (ext == NULL) return 0;
    int ok = X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return ok;
}

// The certificate's subjectAltNames as text, one a line: "DNS:name" or "IP:address" (the address
// as inet_ntop writes it); other kinds are skipped. Returns the length written (0: none), or -1
// when `size` is too small.
static inline long lifesync_x509_san_text(X509 *cert, char *out, size_t size) {
    GENERAL_NAMES *names = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
    if (names == NULL) { if (size > 0) out[0] = 0; return 0; }
    size_t used = 0;
    long result = 0;
    for (int i = 0; i < sk_GENERAL_NAME_num(names); i++) {
        const GENERAL_NAME *name = sk_GENERAL_NAME_value(names, i);
        char line[300];
        line[0] = 0;
        if (name->type == GEN_DNS) {
            const ASN1_STRING *dns = name->d.dNSName;
            int length = ASN1_STRING_length(dns);
            if (length < 0 || length > 253) continue;
            memcpy(line, "DNS:", 4);
            memcpy(line + 4, ASN1_STRING_get0_data(dns), (size_t)length);
            line[4 + length] = 0;
        } else if (name->type == GEN_IPADD) {
            const ASN1_OCTET_STRING *ip = name->d.iPAddress;
            int length = ASN1_STRING_length(ip);
            int family = length == 4 ? AF_INET : length == 16 ? AF_INET6 : 0;
            if (family == 0) continue;
            memcpy(line, "IP:", 3);
            if (inet_ntop(family, ASN1_STRING_get0_data(ip), line + 3, sizeof line - 3) == NULL) continue;
        } else {
            continue;
        }
        size_t length = strlen(line);
        if (used + length + 2 > size) { result = -1; break; }
        memcpy(out + used, line, length);
        out[used + length] = '\n';
        used += length + 1;
    }
    GENERAL_NAMES_free(names);
    if (result < 0) return -1;
    out[used] = 0;
    return (long)used;
}

// Seconds from now until the certificate's notAfter (negative once past), in `seconds`. 1 on success.
static inline int lifesync_x509_seconds_left(X509 *cert, long long *seconds) {
    int days = 0, secs = 0;
    if (ASN1_TIME_diff(&days, &secs, NULL, X509_get0_notAfter(cert)) != 1) return 0;
    *seconds = (long long)days * 86400 + secs;
    return 1;
}

// Seconds from notBefore to notAfter. 1 on success.
static inline int lifesync_x509_validity_seconds(X509 *cert, long long *seconds) {
    int days = 0, secs = 0;
    if (ASN1_TIME_diff(&days, &secs, X509_get0_notBefore(cert), X509_get0_notAfter(cert)) != 1) return 0;
    *seconds = (long long)days * 86400 + secs;
    return 1;
}

#endif
