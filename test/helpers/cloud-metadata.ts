/**
 * The clouds' documented metadata and host-internal endpoints, which no webhook may call, with or
 * without WEBHOOK_ALLOW_PRIVATE: as URL hosts (IPv6 in brackets), each with whose it is.
 */
export const cloudInternalHosts: [host: string, whose: string][] = [
  ["169.254.169.254", "AWS, Azure, GCP, Oracle, DigitalOcean, OpenStack instance metadata"],
  ["[fd00:ec2::254]", "AWS instance metadata (IPv6)"],
  ["169.254.170.2", "AWS ECS task metadata and credentials"],
  ["169.254.170.23", "AWS EKS Pod Identity"],
  ["[fd00:ec2::23]", "AWS EKS Pod Identity (IPv6)"],
  ["169.254.169.253", "AWS DNS"],
  ["[fd00:ec2::253]", "AWS DNS (IPv6)"],
  ["169.254.169.123", "AWS time"],
  ["168.63.129.16", "Azure WireServer"],
  ["[fd20:ce::254]", "GCP metadata (IPv6)"],
  ["100.100.100.200", "Alibaba Cloud metadata"],
  ["[fd00:c1::a9fe:a9fe]", "Oracle Cloud metadata (IPv6)"],
  ["192.0.0.192", "Oracle Cloud Classic metadata"],
  ["169.254.42.42", "Scaleway metadata"],
  ["[fe80::a9fe:a9fe]", "OpenStack metadata (IPv6 link-local)"],
  ["[::ffff:168.63.129.16]", "Azure WireServer, IPv4-mapped"],
  ["[64:ff9b::a9fe:a9fe]", "169.254.169.254 through NAT64"],
  ["0xa9fea9fe", "169.254.169.254 written as one hex number"],
  ["metadata.google.internal", "GCP metadata, by name"],
  ["metadata", "GCP metadata, by its short name"],
  ["metadata.goog", "GCP metadata, by name"],
  ["METADATA.Google.Internal.", "GCP metadata, by name in capitals with a final dot"],
  ["instance-data", "AWS instance metadata, by name"],
];
