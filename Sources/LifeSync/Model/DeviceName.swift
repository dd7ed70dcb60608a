/// A person's name for a device ("Kitchen iPad", "Running watch"), shown wherever the device is
/// shown instead of its node ID.
package enum DeviceName {
    /// The most characters a name may have: it has to fit a line beside other columns.
    package static let maximumLength = 64

    /// `text` trimmed of surrounding spaces, or the problem with it: empty, longer than
    /// `maximumLength` characters, or holding a control character (a tab, a newline, an escape).
    /// `field` names the input in the error (`--name`, `name`).
    package static func validated(_ text: String, field: String = "name") throws(ValidationError) -> String {
        let name = String(text.drop(while: { $0 == " " }).reversed().drop(while: { $0 == " " }).reversed())
        guard !name.isEmpty else { throw ValidationError(field: field, reason: "a device name must not be empty") }
        guard name.count <= maximumLength else {
            throw ValidationError(field: field, reason: "a device name has at most \(maximumLength) characters, this one has \(name.count)")
        }
        // Control characters (tab, newline, escape) and invisible format ones (a right-to-left
        // override); the zero-width joiner stays, emoji are made with it.
        if let control = name.unicodeScalars.first(where: { $0.properties.generalCategory == .control || $0.properties.generalCategory == .format && $0.value != 0x200D }) {
            let hex = String(control.value, radix: 16, uppercase: true)
            let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            throw ValidationError(field: field, reason: "a device name must not hold control characters (found \(code) at character \(name.unicodeScalars.prefix(while: { $0 != control }).count + 1))")
        }
        return name
    }
}
