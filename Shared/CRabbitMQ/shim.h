#include <amqp.h>
#include <amqp_tcp_socket.h>
#include <amqp_framing.h>

/// `amqp_login` is variadic, which Swift cannot call: this fixes its arguments to plain-password login.
static inline amqp_rpc_reply_t tarrare_amqp_login(amqp_connection_state_t state, const char *vhost, int channel_max,
                                                  int frame_max, int heartbeat, const char *user,
                                                  const char *password) {
    return amqp_login(state, vhost, channel_max, frame_max, heartbeat, AMQP_SASL_METHOD_PLAIN, user, password);
}

/// An empty byte string, which Swift sees as a macro it cannot import.
static inline amqp_bytes_t tarrare_amqp_empty_bytes(void) { return amqp_empty_bytes; }

/// An empty table, likewise.
static inline amqp_table_t tarrare_amqp_empty_table(void) { return amqp_empty_table; }
