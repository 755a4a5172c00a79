package clustertest

import (
	"encoding/binary"
	"net"
	"syscall"
)

// sockDiagInode asks the kernel (NETLINK_SOCK_DIAG, an exact look-up by
// the four addresses, as ss does) for the inode of the TCP socket whose
// local address is client and remote address server. It returns 0 when
// there is no such socket or the look-up fails. Unlike reading
// /proc/net/tcp, which lists every socket of the machine (thousands on a
// busy one, a quarter of a second under load), it costs one round trip to
// the kernel whatever the number of sockets: the recorder does it on every
// new connection to an MCP test server, before the request is served.
func sockDiagInode(client, server *net.TCPAddr) uint64 {
	fd, err := syscall.Socket(syscall.AF_NETLINK, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, syscall.NETLINK_INET_DIAG)
	if err != nil {
		return 0
	}
	defer syscall.Close(fd)
	for _, family := range []byte{syscall.AF_INET, syscall.AF_INET6} {
		if ino := sockDiagQuery(fd, family, client, server); ino != 0 {
			return ino
		}
	}
	return 0
}

const (
	sockDiagByFamily = 20 // SOCK_DIAG_BY_FAMILY
	nlmsgHdrLen      = 16
	inetDiagReqLen   = 56 // struct inet_diag_req_v2
	// Offsets in a struct inet_diag_msg: family, state, timer, retrans
	// (4), the socket id (48), expires, rqueue, wqueue, uid (16), inode.
	inetDiagMsgInode = 4 + 48 + 16
)

func sockDiagQuery(fd int, family byte, client, server *net.TCPAddr) uint64 {
	addr := func(ip net.IP) []byte {
		if family == syscall.AF_INET {
			return ip.To4()
		}
		return ip.To16() // an IPv4 address as ::ffff:a.b.c.d
	}
	src, dst := addr(client.IP), addr(server.IP)
	if src == nil || dst == nil {
		return 0
	}
	msg := make([]byte, nlmsgHdrLen+inetDiagReqLen)
	ne := binary.NativeEndian
	ne.PutUint32(msg[0:], uint32(len(msg)))
	ne.PutUint16(msg[4:], sockDiagByFamily)
	ne.PutUint16(msg[6:], syscall.NLM_F_REQUEST)
	ne.PutUint32(msg[8:], 1) // sequence
	req := msg[nlmsgHdrLen:]
	req[0] = family
	req[1] = syscall.IPPROTO_TCP
	ne.PutUint32(req[4:], 0xffffffff) // every state
	id := req[8:]
	binary.BigEndian.PutUint16(id[0:], uint16(client.Port))
	binary.BigEndian.PutUint16(id[2:], uint16(server.Port))
	copy(id[4:20], src)
	copy(id[20:36], dst)
	ne.PutUint32(id[40:], 0xffffffff) // no cookie
	ne.PutUint32(id[44:], 0xffffffff)
	if err := syscall.Sendto(fd, msg, 0, &syscall.SockaddrNetlink{Family: syscall.AF_NETLINK}); err != nil {
		return 0
	}
	buf := make([]byte, 8192)
	n, _, err := syscall.Recvfrom(fd, buf, 0)
	if err != nil || n < nlmsgHdrLen {
		return 0
	}
	msgs, err := syscall.ParseNetlinkMessage(buf[:n])
	if err != nil {
		return 0
	}
	for _, m := range msgs {
		if m.Header.Type != sockDiagByFamily || len(m.Data) < inetDiagMsgInode+4 {
			continue
		}
		return uint64(ne.Uint32(m.Data[inetDiagMsgInode:]))
	}
	return 0
}
