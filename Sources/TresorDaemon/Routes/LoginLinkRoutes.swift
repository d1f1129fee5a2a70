import Foundation
import Hummingbird
import TresorKeybag
import TresorProtocol
import TresorSystem

/// The login link (docs/API.md, "Login link"): `tresor passcode link-login`/`unlink-login`, and
/// the PAM module's unlock and password change. Passwords arrive in request bodies only and are
/// never logged. The login keybag only: created keychains keep their own passcodes.
struct LoginLinkRoutes {
    let slot: KeybagSlot
    let status: StatusProvider

    func register(on router: Router<DaemonRequestContext>) {
        router.post(RouterPath(Route.loginLink)) { request, context in
            var body = try await request.decode(as: LinkLoginRequest.self, context: context)
            let passcode = try Passcode.taking(&body.passcode)
            let password = try Self.loginPassword { try Passcode.taking(&body.loginPassword) }
            let keybag = try slot.keybag()
            try await KeybagRoutes.logged("linking the keybag to the login password", context) {
                try await offloaded { try keybag.linkLogin(passcode: passcode, loginPassword: password) }
            }
            return try status.current()
        }
        router.post(RouterPath(Route.loginLinkRemove)) { request, context in
            var body = try await request.decode(as: UnlinkLoginRequest.self, context: context)
            let passcode = try Passcode.taking(&body.passcode)
            let keybag = try slot.keybag()
            guard keybag.loginLinkStatus != nil else { return try status.current() }
            try await KeybagRoutes.logged("unlinking the keybag from the login password", context) {
                try await offloaded {
                    try keybag.verify(passcode: passcode)
                    _ = try keybag.unlinkLogin()
                }
            }
            return try status.current()
        }
        router.post(RouterPath(Route.loginLinkUnlock)) { request, context in
            var body = try await request.decode(as: LoginUnlockRequest.self, context: context)
            let password = try Self.loginPassword { try Passcode.taking(&body.password) }
            let keybag = try slot.keybag()
            try await KeybagRoutes.logged("unlock with the login password", context) {
                try await offloaded { try keybag.unlock(loginPassword: password) }
            }
            status.keychains.recordUnlock(by: "the login password, through the PAM module (a login or a screen unlock)")
            return try status.current()
        }
        router.post(RouterPath(Route.loginLinkPasswordChanged)) { request, context in
            var body = try await request.decode(as: LoginPasswordChangedRequest.self, context: context)
            let new = try Self.loginPassword { try Passcode.taking(&body.new) }
            let keybag = try slot.keybag()
            if let old = try Self.loginPassword({ try Passcode.taking(&body.old) }) {
                try await KeybagRoutes.logged("following the login password's change", context) {
                    try await offloaded { try keybag.changeLoginPassword(old: old, to: new) }
                }
            } else {
                try keybag.markLoginLinkStale(.passwordChangedWithoutOld)
                context.logger.notice("login link marked stale: the login password changed without the old one")
            }
            return try status.current()
        }
    }

    /// A login password as the keybag takes it (the passcode's bounds), with an error naming it.
    /// - Parameter take: takes the field out of its request (`TypedSecret.taking(_:)`).
    /// - Returns: what `take` returns.
    /// - Throws: `400 param` when `take` refuses the text.
    private static func loginPassword<Taken>(_ take: () throws -> Taken) throws -> Taken {
        do {
            return try take()
        } catch {
            throw APIError(.param, "the login password is empty or longer than \(Passcode.maximumByteCount) bytes")
        }
    }
}
