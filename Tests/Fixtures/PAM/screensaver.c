/*
 * What a screensaver does through PAM when the user types the password to unlock the screen:
 * pam_authenticate, then pam_setcred(PAM_REINITIALIZE_CRED) — and no session. Run as the user,
 * as screensavers run. Usage: screensaver SERVICE USER, the password on standard input.
 * Exits 0 when both succeed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <security/pam_appl.h>

static char password[1024];

static int converse(int count, const struct pam_message **messages, struct pam_response **responses, void *data)
{
    (void)data;
    struct pam_response *answers = calloc((size_t)count, sizeof *answers);
    if (answers == NULL) return PAM_BUF_ERR;
    for (int i = 0; i < count; i++) {
        if (messages[i]->msg_style == PAM_PROMPT_ECHO_OFF || messages[i]->msg_style == PAM_PROMPT_ECHO_ON) {
            answers[i].resp = strdup(password);
        }
    }
    *responses = answers;
    return PAM_SUCCESS;
}

int main(int argc, char **argv)
{
    if (argc != 3) return 2;
    if (fgets(password, sizeof password, stdin) == NULL) return 2;
    password[strcspn(password, "\n")] = 0;
    struct pam_conv conversation = {converse, NULL};
    pam_handle_t *pamh = NULL;
    if (pam_start(argv[1], argv[2], &conversation, &pamh) != PAM_SUCCESS) return 3;
    int result = pam_authenticate(pamh, 0);
    if (result == PAM_SUCCESS) result = pam_setcred(pamh, PAM_REINITIALIZE_CRED);
    printf("%s\n", pam_strerror(pamh, result));
    pam_end(pamh, result);
    return result == PAM_SUCCESS ? 0 : 1;
}
