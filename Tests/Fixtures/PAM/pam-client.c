/*
 * PAM clients the tests play, the password on standard input:
 *   pam-client login SERVICE USER
 *       login or sshd: pam_authenticate, pam_setcred(PAM_ESTABLISH_CRED), pam_open_session; as root.
 *   pam-client screensaver SERVICE USER
 *       a screensaver unlocking the screen: pam_authenticate, then pam_setcred(PAM_REINITIALIZE_CRED),
 *       no session; run as the user, as screensavers run.
 *   pam-client sudo SERVICE USER TARGET
 *       sudo: USER authenticates with their own password, then PAM_USER becomes TARGET for
 *       pam_setcred and pam_open_session; run as root.
 * Prints pam_strerror of the last step; exits 0 when every step succeeded.
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
    int sudo = argc == 5 && strcmp(argv[1], "sudo") == 0;
    int login = argc == 4 && strcmp(argv[1], "login") == 0;
    if (!sudo && !login && !(argc == 4 && strcmp(argv[1], "screensaver") == 0)) return 2;
    if (fgets(password, sizeof password, stdin) == NULL) return 2;
    password[strcspn(password, "\n")] = 0;
    struct pam_conv conversation = {converse, NULL};
    pam_handle_t *pamh = NULL;
    if (pam_start(argv[2], argv[3], &conversation, &pamh) != PAM_SUCCESS) return 3;
    int result = pam_authenticate(pamh, 0);
    if (sudo || login) {
        if (sudo && result == PAM_SUCCESS) result = pam_set_item(pamh, PAM_USER, argv[4]);
        if (result == PAM_SUCCESS) result = pam_setcred(pamh, PAM_ESTABLISH_CRED);
        if (result == PAM_SUCCESS) result = pam_open_session(pamh, 0);
    } else if (result == PAM_SUCCESS) {
        result = pam_setcred(pamh, PAM_REINITIALIZE_CRED);
    }
    printf("%s\n", pam_strerror(pamh, result));
    pam_end(pamh, result);
    return result == PAM_SUCCESS ? 0 : 1;
}
