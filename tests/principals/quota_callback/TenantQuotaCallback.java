package kquota.testing;

import java.util.Map;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.server.quota.ClientQuotaCallback;
import org.apache.kafka.server.quota.ClientQuotaEntity;
import org.apache.kafka.server.quota.ClientQuotaType;

/**
 * TenantQuotaCallback is the smallest custom quota callback: every client shares one metric
 * and none is limited. Its only job in kquota's tests is to be a broker's
 * client.quota.callback.class, so that kquota can be shown to notice one.
 */
public final class TenantQuotaCallback implements ClientQuotaCallback {
    @Override
    public void configure(Map<String, ?> configs) {
        System.out.println("TenantQuotaCallback configured");
    }

    @Override
    public Map<String, String> quotaMetricTags(
            ClientQuotaType quotaType, KafkaPrincipal principal, String clientId) {
        return Map.of("tenant", "all");
    }

    @Override
    public Double quotaLimit(ClientQuotaType quotaType, Map<String, String> metricTags) {
        return null;
    }

    @Override
    public void updateQuota(ClientQuotaType quotaType, ClientQuotaEntity entity, double value) {}

    @Override
    public void removeQuota(ClientQuotaType quotaType, ClientQuotaEntity entity) {}

    @Override
    public boolean quotaResetRequired(ClientQuotaType quotaType) {
        return false;
    }

    @Override
    public boolean updateClusterMetadata(Cluster cluster) {
        return false;
    }

    @Override
    public void close() {}
}
