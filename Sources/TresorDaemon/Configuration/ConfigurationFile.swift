import Foundation
import TresorModel
import TresorProtocol
import TresorSystem
import TresorWebServer

/// The optional `config.json` of a home: the daemon's keys here, the web server's in ``web``.
struct ConfigurationFile: Codable {
    var autoLockSeconds: Int?
    var notesSessionIdleSeconds: Int?
    var notesAttachmentBytes: Int?
    var database: String?
    var serverKeyFile: String?
    var secretServiceReadsAreActivity: Bool?
    var lockWithScreen: Bool?
    var secretServiceRememberHours: Int?
    var desktopPromptSeconds: Int?
    var secretService: Bool?
    var secretServiceGenericClients: [String]?
    var syncInBackground: Bool?
    var socketIdleSeconds: Int?
    /// The web server's keys, from the same JSON object.
    var web = WebConfigurationFile()

    enum CodingKeys: String, CodingKey, CaseIterable {
        case autoLockSeconds, notesSessionIdleSeconds, notesAttachmentBytes, database, serverKeyFile, secretServiceReadsAreActivity, lockWithScreen,
            secretServiceRememberHours, desktopPromptSeconds, secretService,
            secretServiceGenericClients, syncInBackground, socketIdleSeconds
    }

    static func load(_ url: URL) throws -> ConfigurationFile {
        let data: Data
        do {
            data = try SecureFiles.read(url, limit: 64 * 1024)
        } catch SecureFileError.notFound {
            return ConfigurationFile()
        }
        let file: ConfigurationFile, keys: [String]
        do {
            var decoded = try JSONDecoder().decode(ConfigurationFile.self, from: data)
            decoded.web = try JSONDecoder().decode(WebConfigurationFile.self, from: data)
            (file, keys) = (decoded, try JSONDecoder().decode(ObjectKeys.self, from: data).names)
        } catch {
            throw DaemonError.configuration("\(url.path) is not valid JSON of the documented shape")
        }
        // A key misspelt would be left out in silence, its setting not taken.
        if let unknown = keys.filter({ !settings.contains($0) }).sorted().first {
            let meant =
                NearestName.to(unknown, among: settings.sorted()).map { ": did you mean \"\($0)\"?" } ?? " (docs/FORMAT.md lists the settings)"
            throw DaemonError.configuration("\(url.path) has no setting \"\(unknown)\"\(meant)")
        }
        return file
    }

    /// Every key `config.json` takes: the daemon's and the web server's.
    static let settings = Set(CodingKeys.allCases.map(\.rawValue)).union(WebConfigurationFile.keys)
}

/// The keys of a JSON object, whatever their values.
private struct ObjectKeys: Decodable {
    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    let names: [String]

    init(from decoder: any Decoder) throws { names = try decoder.container(keyedBy: Key.self).allKeys.map(\.stringValue) }
}
