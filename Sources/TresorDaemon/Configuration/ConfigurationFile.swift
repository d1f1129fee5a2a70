import Foundation
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

    enum CodingKeys: String, CodingKey {
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
        do {
            var file = try JSONDecoder().decode(ConfigurationFile.self, from: data)
            file.web = try JSONDecoder().decode(WebConfigurationFile.self, from: data)
            return file
        } catch {
            throw DaemonError.configuration("\(url.path) is not valid JSON of the documented shape")
        }
    }
}
