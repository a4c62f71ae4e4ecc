package client

import (
	"context"
	"errors"
	"fmt"
	"io"

	writepathv1 "github.com/writepath/writepath/proto/writepath/v1"
)

// CampaignSource is where stored campaigns are read from: a coordinator or
// a store file.
type CampaignSource interface {
	Source
	ListCampaigns(ctx context.Context, limit int) ([]*writepathv1.Campaign, error)
	GetCampaign(ctx context.Context, id string) (*writepathv1.Campaign, error)
}

var (
	_ CampaignSource = (*Client)(nil)
	_ CampaignSource = (*File)(nil)
)

// SubmitCampaign submits an expanded campaign.
func (c *Client) SubmitCampaign(ctx context.Context, plan *writepathv1.CampaignPlan) (*writepathv1.Campaign, error) {
	resp, err := c.ctl.SubmitCampaign(ctx, &writepathv1.SubmitCampaignRequest{Plan: plan})
	if err != nil {
		return nil, rpcErr("submit campaign "+plan.GetName(), err)
	}
	return resp.GetCampaign(), nil
}

// ResumeCampaign continues a stopped campaign.
func (c *Client) ResumeCampaign(ctx context.Context, id string) (*writepathv1.Campaign, error) {
	resp, err := c.ctl.ResumeCampaign(ctx, &writepathv1.ResumeCampaignRequest{CampaignId: id})
	if err != nil {
		return nil, rpcErr("resume campaign "+id, err)
	}
	return resp.GetCampaign(), nil
}

// CancelCampaign stops a running campaign and its runs in flight.
func (c *Client) CancelCampaign(ctx context.Context, id, reason string) (*writepathv1.Campaign, error) {
	resp, err := c.ctl.CancelCampaign(ctx, &writepathv1.CancelCampaignRequest{CampaignId: id, Reason: reason})
	if err != nil {
		return nil, rpcErr("cancel campaign "+id, err)
	}
	return resp.GetCampaign(), nil
}

// WatchCampaign follows a campaign until it stops running, calling onChange
// with every version of its record, and returns the last one.
func (c *Client) WatchCampaign(ctx context.Context, id string, onChange func(*writepathv1.Campaign)) (*writepathv1.Campaign, error) {
	stream, err := c.ctl.WatchCampaign(ctx, &writepathv1.WatchCampaignRequest{CampaignId: id})
	if err != nil {
		return nil, rpcErr("watch campaign "+id, err)
	}
	var last *writepathv1.Campaign
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return last, nil
		}
		if err != nil {
			return last, rpcErr("watch campaign "+id, err)
		}
		last = resp.GetCampaign()
		if onChange != nil {
			onChange(last)
		}
	}
}

// ListCampaigns lists the coordinator's campaigns, newest first.
func (c *Client) ListCampaigns(ctx context.Context, limit int) ([]*writepathv1.Campaign, error) {
	resp, err := c.ctl.ListCampaigns(ctx, &writepathv1.ListCampaignsRequest{Limit: uint32(limit)})
	if err != nil {
		return nil, rpcErr("list campaigns", err)
	}
	return resp.GetCampaigns(), nil
}

// GetCampaign reads a campaign.
func (c *Client) GetCampaign(ctx context.Context, id string) (*writepathv1.Campaign, error) {
	resp, err := c.ctl.GetCampaign(ctx, &writepathv1.GetCampaignRequest{CampaignId: id})
	if err != nil {
		return nil, rpcErr("campaign "+id, err)
	}
	return resp.GetCampaign(), nil
}

// ListCampaigns lists the file's campaigns, newest first.
func (f *File) ListCampaigns(_ context.Context, limit int) ([]*writepathv1.Campaign, error) {
	return f.st.ListCampaigns(limit)
}

// GetCampaign reads a campaign from the file.
func (f *File) GetCampaign(_ context.Context, id string) (*writepathv1.Campaign, error) {
	c, err := f.st.GetCampaign(id)
	if err != nil {
		return nil, fmt.Errorf("%w (list them with `writepath campaign list`)", err)
	}
	return c, nil
}
