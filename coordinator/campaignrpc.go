package coordinator

import (
	"context"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// The ControlService's campaign handlers: translation only.

func (cs *controlService) SubmitCampaign(_ context.Context, req *writepathv1.SubmitCampaignRequest) (*writepathv1.SubmitCampaignResponse, error) {
	c, err := cs.c.SubmitCampaign(req.GetPlan())
	if err != nil {
		return nil, toStatus(err)
	}
	return &writepathv1.SubmitCampaignResponse{Campaign: c}, nil
}

func (cs *controlService) ResumeCampaign(_ context.Context, req *writepathv1.ResumeCampaignRequest) (*writepathv1.ResumeCampaignResponse, error) {
	c, err := cs.c.ResumeCampaign(req.GetCampaignId())
	if err != nil {
		return nil, toStatus(err)
	}
	return &writepathv1.ResumeCampaignResponse{Campaign: c}, nil
}

func (cs *controlService) WatchCampaign(req *writepathv1.WatchCampaignRequest, stream writepathv1.ControlService_WatchCampaignServer) error {
	err := cs.c.WatchCampaign(stream.Context(), req.GetCampaignId(), func(c *writepathv1.Campaign) error {
		return stream.Send(&writepathv1.WatchCampaignResponse{Campaign: c})
	})
	if err != nil {
		return toStatus(err)
	}
	return nil
}

func (cs *controlService) CancelCampaign(_ context.Context, req *writepathv1.CancelCampaignRequest) (*writepathv1.CancelCampaignResponse, error) {
	c, err := cs.c.CancelCampaign(req.GetCampaignId(), req.GetReason())
	if err != nil {
		return nil, toStatus(err)
	}
	return &writepathv1.CancelCampaignResponse{Campaign: c}, nil
}

func (cs *controlService) ListCampaigns(_ context.Context, req *writepathv1.ListCampaignsRequest) (*writepathv1.ListCampaignsResponse, error) {
	list, err := cs.c.ListCampaigns(int(req.GetLimit()))
	if err != nil {
		return nil, toStatus(err)
	}
	return &writepathv1.ListCampaignsResponse{Campaigns: list}, nil
}

func (cs *controlService) GetCampaign(_ context.Context, req *writepathv1.GetCampaignRequest) (*writepathv1.GetCampaignResponse, error) {
	c, err := cs.c.GetCampaign(req.GetCampaignId())
	if err != nil {
		return nil, toStatus(err)
	}
	return &writepathv1.GetCampaignResponse{Campaign: c}, nil
}
