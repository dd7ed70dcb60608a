/// Any JSON document through `Codable`, so a `JSONDecoder` (or any other decoder) can hand
/// LifeSync the value its own validators read: the JSON shape of every model type stays in one
/// place (its `json` property and its `validated` reader), and `Codable` only bridges to it.
extension JSONValue: Codable {
    /// A member name of any spelling.
    struct MemberKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        if let object = try? decoder.container(keyedBy: MemberKey.self) {
            // A decoder's keys come in no promised order; sorted, equal documents decode equally.
            let keys = object.allKeys.sorted { $0.stringValue < $1.stringValue }
            var members: [(String, JSONValue)] = []
            for key in keys { members.append((key.stringValue, try object.decode(JSONValue.self, forKey: key))) }
            self = .object(members)
        } else if var array = try? decoder.unkeyedContainer() {
            var items: [JSONValue] = []
            while !array.isAtEnd { items.append(try array.decode(JSONValue.self)) }
            self = .array(items)
        } else {
            let single = try decoder.singleValueContainer()
            // Bool before Double: some decoders would read `true` as 1.
            if single.decodeNil() {
                self = .null
            } else if let bool = try? single.decode(Bool.self) {
                self = .bool(bool)
            } else if let number = try? single.decode(Double.self) {
                self = .number(number)
            } else if let string = try? single.decode(String.self) {
                self = .string(string)
            } else {
                throw DecodingError.dataCorruptedError(in: single, debugDescription: "not a JSON value")
            }
        }
    }

    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var single = encoder.singleValueContainer()
            try single.encodeNil()
        case .bool(let bool):
            var single = encoder.singleValueContainer()
            try single.encode(bool)
        case .number(let number):
            var single = encoder.singleValueContainer()
            try single.encode(number)
        case .string(let string):
            var single = encoder.singleValueContainer()
            try single.encode(string)
        case .array(let items):
            var array = encoder.unkeyedContainer()
            for item in items { try array.encode(item) }
        case .object(let members):
            var object = encoder.container(keyedBy: MemberKey.self)
            for (key, value) in members { try object.encode(value, forKey: MemberKey(stringValue: key)) }
        }
    }
}
