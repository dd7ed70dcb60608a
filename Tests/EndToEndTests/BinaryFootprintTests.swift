import Testing
import TestSupport

/// What the `lifesync` binary loads. Foundation proper brings libFoundation, its
/// internationalization and ICU: about 6 MiB of every node's resident memory that nothing of
/// ours uses (an idle node must stay under 32 MiB, issue 30). The code imports
/// FoundationEssentials, Glibc and Dispatch only; this holds it there.
@Suite struct BinaryFootprintTests {
    @Test func theBinaryNeedsNoFoundationBeyondEssentials() throws {
        let dynamic = try Captured.run("/usr/bin/readelf", ["-d", LifeSyncBinary.path], timeout: 30)
        #expect(dynamic.status == 0, "\(dynamic.stderr)")
        let needed = dynamic.stdout.split(separator: "\n").filter { $0.contains("(NEEDED)") }.map(String.init)
        #expect(needed.contains { $0.contains("[libsqlite3.so") }, "readelf lists what the binary needs: \(needed)")
        for heavy in ["[libFoundation.so]", "[libFoundationInternationalization.so]", "[lib_FoundationICU.so]"] {
            #expect(!needed.contains { $0.contains(heavy) }, "the binary needs \(heavy): some file imports Foundation, not FoundationEssentials")
        }
    }
}
