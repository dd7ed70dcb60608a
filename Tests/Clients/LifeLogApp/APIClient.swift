// The LifeLog document's APIClient.swift (seed 004, "LifeLogKit Core Components"), as written: not edited.
import Foundation

public actor APIClient {
    private let baseURL: URL
    private let apiKey: String
    private let session: URLSession
    
    public init(baseURL: URL, apiKey: String) {
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.session = URLSession.shared
    }
    
    public func createEntries(_ entries: [LogEntry]) async throws {
        var request = URLRequest(url: baseURL.appendingPathComponent("api/entries"))
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("Bearer \(apiKey)", forHTTPHeaderField: "Authorization")
        request.httpBody = try JSONEncoder.iso8601.encode(entries)
        
        let (_, response) = try await session.data(for: request)
        guard let httpResponse = response as? HTTPURLResponse,
              200..<300 ~= httpResponse.statusCode else {
            throw APIError.requestFailed
        }
    }
    
    public func fetchEntries(since: Date? = nil, category: String? = nil) async throws -> [LogEntry] {
        var components = URLComponents(url: baseURL.appendingPathComponent("api/entries"), resolvingAgainstBaseURL: false)!
        var queryItems: [URLQueryItem] = []
        
        if let since {
            queryItems.append(URLQueryItem(name: "since", value: ISO8601DateFormatter().string(from: since)))
        }
        if let category {
            queryItems.append(URLQueryItem(name: "category", value: category))
        }
        
        components.queryItems = queryItems.isEmpty ? nil : queryItems
        
        var request = URLRequest(url: components.url!)
        request.setValue("Bearer \(apiKey)", forHTTPHeaderField: "Authorization")
        
        let (data, _) = try await session.data(for: request)
        return try JSONDecoder.iso8601.decode([LogEntry].self, from: data)
    }
}
