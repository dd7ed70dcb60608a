import CSQLite

extension Database {
    /// Functions the replica's queries use, registered on every connection.
    func registerFunctions() {
        registerSearchFunction()
    }

    /// `lifesync_search(text, query)`: 1 when `text` matches `query` by the `TextSearch` rule.
    private func registerSearchFunction() {
        sqlite3_create_function_v2(handle, "lifesync_search", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, nil, { context, _, arguments in
            guard let arguments, let textValue = arguments[0], let queryValue = arguments[1],
                  let text = sqlite3_value_text(textValue), let query = sqlite3_value_text(queryValue) else {
                sqlite3_result_int(context, 0)
                return
            }
            let textString = String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_value_bytes(textValue))), as: UTF8.self)
            let queryString = String(decoding: UnsafeBufferPointer(start: query, count: Int(sqlite3_value_bytes(queryValue))), as: UTF8.self)
            sqlite3_result_int(context, TextSearch(query: queryString).matches(textString) ? 1 : 0)
        }, nil, nil, nil)
    }
}
