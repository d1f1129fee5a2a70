import Foundation
import TresorKit

/// A tiny keychain client for the end-to-end tests: built as two executables (ProbeAlpha,
/// ProbeBeta) so the daemon sees two applications with different executable hashes.
///
///     probe add SERVICE ACCOUNT [GROUP]   (secret on stdin)
///     probe get SERVICE ACCOUNT [GROUP]
///     probe find SERVICE
///     probe update SERVICE ACCOUNT        (new secret on stdin)
///     probe delete SERVICE ACCOUNT
///
/// Prints the result, or `error CODE OSSTATUS MESSAGE` and exits 1.
public enum KeychainProbe {
    public static func main() {
        let arguments = Array(CommandLine.arguments.dropFirst())
        do {
            let keychain = try Keychain()
            guard arguments.count >= 2 else { throw APIError(.param, "usage: probe COMMAND SERVICE [ACCOUNT] [GROUP]") }
            let query = ItemQuery.genericPassword(
                service: arguments[1], account: arguments.count > 2 ? arguments[2] : nil,
                accessGroup: arguments.count > 3 ? arguments[3] : nil)
            switch arguments[0] {
            case "add":
                let item = try keychain.add(query, secret: FileHandle.standardInput.readDataToEndOfFile())
                print("added \(item.id) \(item.attributes?.accessGroup ?? "")")
            case "get":
                print(String(decoding: try keychain.secret(query), as: UTF8.self))
            case "find":
                for attributes in try keychain.attributes(query) {
                    print("\(attributes.accessGroup ?? "") \(attributes.service ?? "") \(attributes.account ?? "")")
                }
            case "update":
                print("updated \(try keychain.update(query, secret: FileHandle.standardInput.readDataToEndOfFile()))")
            case "delete":
                print("deleted \(try keychain.delete(query))")
            default:
                throw APIError(.param, "unknown command \(arguments[0])")
            }
        } catch let error as APIError {
            print("error \(error.code.rawValue) \(error.osStatus.map(String.init) ?? "-") \(error.message)")
            exit(1)
        } catch {
            print("error client \(error)")
            exit(1)
        }
    }
}
