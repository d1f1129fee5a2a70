/* A victim with an identity of its own: an application that keeps one password in the Secret
 * Service and never prints it (as a mail or sync client does). Registered with Tresor as an
 * application (`tresor app register --secret-service`); an ordinary client to the peers.
 *
 *   notes-sync store    the password on standard input
 *   notes-sync check    the expected password on standard input; prints same, different or missing
 *
 * Built by Benchmarks/attackers.py: gcc notes-sync.c $(pkg-config --cflags --libs libsecret-1). */
#include <libsecret/secret.h>
#include <stdio.h>
#include <string.h>

static const SecretSchema schema = {
    "org.example.NotesSync", SECRET_SCHEMA_NONE,
    {{"app", SECRET_SCHEMA_ATTRIBUTE_STRING}, {"account", SECRET_SCHEMA_ATTRIBUTE_STRING}, {NULL, 0}}};

static void read_input(char *buffer, size_t size) {
    size_t length = fread(buffer, 1, size - 1, stdin);
    buffer[length] = 0;
    while (length > 0 && buffer[length - 1] == '\n') buffer[--length] = 0;
}

int main(int argc, char **argv) {
    char input[512];
    GError *error = NULL;
    if (argc != 2) return 2;
    read_input(input, sizeof input);
    if (strcmp(argv[1], "store") == 0) {
        if (!secret_password_store_sync(&schema, SECRET_COLLECTION_DEFAULT, "Notes sync account", input, NULL, &error, "app",
                                        "notes-sync", "account", "ada", NULL)) {
            fprintf(stderr, "notes-sync: %s\n", error->message);
            return 1;
        }
        return 0;
    }
    if (strcmp(argv[1], "check") == 0) {
        gchar *found = secret_password_lookup_sync(&schema, NULL, &error, "app", "notes-sync", "account", "ada", NULL);
        if (error != NULL) {
            fprintf(stderr, "notes-sync: %s\n", error->message);
            return 1;
        }
        puts(found == NULL ? "missing" : strcmp(found, input) == 0 ? "same" : "different");
        secret_password_free(found);
        return 0;
    }
    return 2;
}
