"""Who a cluster serves: principals and client ids found from the cluster or a file.

The blast radius of a plan (``--impact``) is resolved for these. Discovery from the
cluster (SCRAM users, ACL principals, consumer-group members, the broker's quota callback)
is :mod:`kquota.principals.live`; a ``--principals FILE`` is :mod:`kquota.principals.listed`.
Both give a :class:`~kquota.principals.model.Discovery`.
"""
