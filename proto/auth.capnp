@0xecad1195ca3e7e4d;
# Authentication handshake, spoken first on every connection to every port
# (master, worker control, worker data). Frames carry protocol id 1 (auth).
#
#   server -> client  Challenge  (server nonce)
#   client -> server  Response   (client nonce, HMAC over both nonces)
#   server -> client  Outcome    (accepted + server's HMAC, or refused + reason)
#
# The HMAC key is the cluster's shared secret; the secret never crosses the
# wire. The client checks the server's HMAC too, so both ends are proven.

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("copse::proto");

struct Challenge {
  version @0 :UInt16;      # handshake version; currently 1
  nonce @1 :Data;          # 32 random bytes
  service @2 :Text;        # "master", "worker-control", "worker-data"
}

struct Response {
  nonce @0 :Data;          # the client's 32 random bytes
  mac @1 :Data;            # HMAC-SHA256(secret, "copse-auth-1 client" | serverNonce | nonce)
  peer @2 :Text;           # who is calling, for logs ("worker c01", "copse client")
}

struct Outcome {
  accepted @0 :Bool;
  mac @1 :Data;            # HMAC-SHA256(secret, "copse-auth-1 server" | clientNonce | serverNonce)
  reason @2 :Text;         # why the peer was refused
}

struct AuthMessage {
  union {
    challenge @0 :Challenge;
    response @1 :Response;
    outcome @2 :Outcome;
  }
}
