// Stores an API token in the keychain and reads it back.
//
//   swift build --product store-token
//   tresor app register --id EXAMPLE.store-token --team EXAMPLE --exe .build/debug/store-token
//   printf %s "my-token" | .build/debug/store-token save
//   .build/debug/store-token show
import Foundation
import TresorKit

let token = ItemQuery.genericPassword(service: "api.example.com", account: "ci")

do {
    let keychain = try Keychain()
    switch CommandLine.arguments.dropFirst().first {
    case "save":
        let secret = FileHandle.standardInput.readDataToEndOfFile()
        do {
            try keychain.add(token, secret: secret) { $0.label = "Example CI token" }
        } catch let error as APIError where error.code == .duplicateItem {
            try keychain.update(token, secret: secret)
        }
        print("saved")
    case "show":
        print(String(decoding: try keychain.secret(token), as: UTF8.self))
    case "forget":
        try keychain.delete(token)
        print("deleted")
    default:
        print("usage: store-token save|show|forget")
    }
} catch let error as APIError {
    // For example: missingEntitlement (OSStatus -34018) until the executable is registered.
    FileHandle.standardError.write(Data("store-token: \(error.message) (OSStatus \(error.osStatus ?? 0))\n".utf8))
    exit(1)
}
