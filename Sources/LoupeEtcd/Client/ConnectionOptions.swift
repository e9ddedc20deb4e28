#if Etcd
/// How an ``EtcdStore`` proves who it is and checks who it talks to over TLS (`https://` endpoints).
///
/// All files are PEM. With none of them set, the server's certificate is checked against the system's
/// trusted roots and no client certificate is sent.
public struct EtcdTLS: Sendable, Equatable, CustomStringConvertible {
    /// The certificate authority that signed the etcd members' certificates (etcd's `--trusted-ca-file`
    /// on the server side); `nil` trusts the system's roots.
    public var certificateAuthorityFile: String?
    /// The client certificate, for clusters that require one (etcd's `--client-cert-auth`).
    public var certificateFile: String?
    /// The client certificate's private key.
    public var privateKeyFile: String?

    /// Creates TLS options.
    ///
    /// - Parameters:
    ///   - certificateAuthorityFile: The CA that signed the members' certificates; `nil` for the system's.
    ///   - certificateFile: A client certificate, when the cluster requires one.
    ///   - privateKeyFile: The client certificate's private key.
    public init(certificateAuthorityFile: String? = nil, certificateFile: String? = nil, privateKeyFile: String? = nil)
    {
        self.certificateAuthorityFile = certificateAuthorityFile
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
    }

    /// Names the files (never their contents).
    public var description: String {
        var parts: [String] = []
        if let certificateAuthorityFile { parts.append("CA \(certificateAuthorityFile)") }
        if let certificateFile { parts.append("certificate \(certificateFile)") }
        return parts.isEmpty ? "TLS" : "TLS (\(parts.joined(separator: ", ")))"
    }
}

/// A user name and password for an etcd cluster with authentication enabled (`etcdctl auth enable`).
///
/// The store exchanges them for a token (`/v3/auth/authenticate`) on each member it talks to, and again when
/// a token expires. Neither the password nor the token ever appears in a log, an error or a description.
public struct EtcdCredentials: Sendable, Equatable, CustomStringConvertible, CustomDebugStringConvertible {
    /// The etcd user.
    public var username: String
    /// The user's password.
    public var password: String

    /// Creates credentials for `username`.
    public init(username: String, password: String) {
        self.username = username
        self.password = password
    }

    /// Names the user; the password is redacted.
    public var description: String { "user \(username)" }
    public var debugDescription: String { "EtcdCredentials(username: \(username), password: <redacted>)" }
}
#endif
